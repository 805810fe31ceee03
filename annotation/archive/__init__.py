"""A project archive (issue 28): everything a project is, in one file, restored whole into another
Concord (PostgreSQL or SQLite) or not at all.

The file is a zip of JSON Lines, one file per table (annotation.archive.tables says which rows a
project owns and in what order), and `manifest.json`:

    {"format": "concord-project-archive", "version": 1, "project": "<slug>",
     "written_at": "<ISO time>", "tables": [{"name": "items", "file": "items.jsonl",
     "rows": 4800, "sha256": "<hex of the file's bytes>"}, ...]}

Each line of a table's file is one row: `id` (its primary key in the archived instance, which
other rows refer to) and its columns by their database names (`item_id`, `node_id`, ...), times in
ISO 8601 with their offset, bytes in base64. Restoring maps every id to the row made (or found)
here. Rows other instances already hold by their natural identity are found, not made: a user by
username, an issue by host/owner/repo/number, a comment by host and id, the taxonomy by name and
version, a node by code. Users come without passwords, tokens or site rights.

Versions: a reader takes every version up to its own (a column an older archive lacks takes the
model's default); a newer version, an unknown table or column, a file whose checksum or row count
differs from the manifest, or a file that is no such zip is refused before anything is written.
"""

FORMAT = "concord-project-archive"
VERSION = 1
MANIFEST = "manifest.json"
