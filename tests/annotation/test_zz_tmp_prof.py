import time
from pathlib import Path
from django.conf import settings
from annotation.projects.importers import study_labels_import
from annotation.reporting.agreement import project_agreement as new
from tests.annotation.zz_old_agreement_tmp import project_agreement as old
from tests.bench.run import generate_csv


def test_prof(project, tmp_path):
    path = tmp_path / "labels.csv"
    generate_csv(path, rows=20000, seed=1, labels_dir=Path(settings.STUDY_DATA_DIR) / "labels")
    study_labels_import(project=project, path=path)
    from django.db import connection
    with connection.cursor() as c:
        c.execute("ANALYZE")
    for f in (old, new):
        f(project, level="theme", by="type")
    times = {"old": [], "new": []}
    for _ in range(8):
        for name, f in (("old", old), ("new", new)):
            t = time.perf_counter()
            for level in ("type", "theme", "subtheme"):
                f(project, level=level, by="type")
            times[name].append(time.perf_counter() - t)
    print()
    for name, r in times.items():
        r.sort()
        print(name, "3 levels: min %.1f ms, median %.1f ms" % (r[0] * 1000, r[4] * 1000))
    a, b = old(project, level="theme", by="type"), new(project, level="theme", by="type")
    for x, y in zip(a.groups, b.groups, strict=True):
        assert x.group == y.group and x.n_items == y.n_items and x.fleiss == y.fleiss and x.alpha == y.alpha
