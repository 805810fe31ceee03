"""Projects: project pages, items from a harvested source, the study-label importer, demo data."""
