"""Taxonomy curation pages (leads and admins; annotation.projects.taxonomy_admin): upload a new
version, edit a node's definition and examples, retire or restore a node."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.gate import gate_node
from annotation.projects.forms import NodeEditForm, TaxonomyUploadForm
from annotation.projects.label_imports import Upload
from annotation.projects.taxonomy_admin import (
    node_edit,
    node_retire,
    require_curator,
    taxonomy_upload,
)
from concord.errors import ConcordError
from taxonomy.models import Node


@login_required
def taxonomy_upload_page(request):
    require_curator(request.user)
    form = TaxonomyUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        tree = Upload(data["tree"].name, data["tree"].read())
        details = [Upload(f.name, f.read()) for f in data["details"] or [] if f]
        try:
            taxonomy = taxonomy_upload(
                user=request.user,
                name=data["name"],
                version=data["version"],
                tree=tree,
                details=details,
            )
        except ConcordError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, _("Loaded %(taxonomy)s.") % {"taxonomy": taxonomy})
            return redirect("taxonomy-detail", pk=taxonomy.pk)
    return render(request, "taxonomy/upload.html", {"form": form})


@login_required
def node_edit_page(request, pk: int):
    node = get_object_or_404(Node.objects.select_related("taxonomy"), pk=pk)
    gate_node(request.user, node)  # a shared node: staff; a project's own: its leads
    examples = "\n".join(node.examples.values_list("text", flat=True))
    initial = {
        "definition": node.definition,
        "name_zh": node.name_zh,
        "definition_zh": node.definition_zh,
        "examples": examples,
    }
    form = NodeEditForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            node_edit(
                user=request.user,
                node=node,
                definition=form.cleaned_data["definition"],
                examples=form.cleaned_data["examples"].splitlines(),
                chinese=_chinese_posted(request, form),
            )
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(
                request,
                _("Saved %(code)s %(name)s.") % {"code": node.code, "name": node.shown_name},
            )
            return redirect("taxonomy-node-edit", pk=node.pk)
    return render(request, "taxonomy/node_edit.html", {"node": node, "form": form})


def _chinese_posted(request, form: NodeEditForm) -> tuple[str, str] | None:
    """The Chinese name and definition the form sent; None from a form that has no such fields
    (one loaded before they existed), which then leaves the stored Chinese as it is."""
    if "name_zh" not in request.POST:
        return None
    return form.cleaned_data["name_zh"], form.cleaned_data["definition_zh"]


@require_POST
@login_required
def node_retire_page(request, pk: int):
    """retire=1 retires the node, retire=0 brings it back."""
    node = get_object_or_404(Node.objects.select_related("taxonomy"), pk=pk)
    gate_node(request.user, node)  # a shared node: staff; a project's own: its leads
    retired = request.POST.get("retire") == "1"
    node_retire(user=request.user, node=node, retired=retired)
    done = _("%(code)s retired.") if retired else _("%(code)s restored.")
    messages.success(request, done % {"code": node.code})
    return redirect("taxonomy-node-edit", pk=node.pk)
