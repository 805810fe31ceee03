"""Interviews (issue 27): practitioners' quotes coded to taxonomy nodes, their rankings, and the
job rows of their imports. An app of its own (label `interviews`) inside taxonomy, with its own
migrations; the services, pages and API that write them are annotation.interviews'."""
