"""Where a form sends the person back to (its `next` field): a path on this site only."""

from django.utils.http import url_has_allowed_host_and_scheme


def local_next(request, fallback: str) -> str:
    """`next` (POST, else the query) if it is a path on this site (`/...`), else `fallback`:
    never another site, a scheme, a protocol-relative `//host`, control characters or raw
    non-ASCII (a page writes its own path as get_full_path does, in ASCII) (issues 12, 32)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    local = (
        target.startswith("/")
        and not target.startswith(("//", "/\\"))
        and target.isascii()
        and target.isprintable()
        and url_has_allowed_host_and_scheme(target, allowed_hosts=None)
    )
    return target if local else fallback
