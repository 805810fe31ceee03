from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from taxonomy.models import Taxonomy
from taxonomy.selectors import taxonomy_counts, taxonomy_tree


@login_required
def taxonomy_list(request):
    taxonomies = Taxonomy.objects.order_by("name", "version")
    return render(request, "taxonomy/taxonomy_list.html", {"taxonomies": taxonomies})


@login_required
def taxonomy_detail(request, pk: int):
    taxonomy = get_object_or_404(Taxonomy, pk=pk)
    context = {
        "taxonomy": taxonomy,
        "tree": taxonomy_tree(taxonomy),
        "counts": taxonomy_counts(taxonomy),
    }
    return render(request, "taxonomy/taxonomy_detail.html", context)
