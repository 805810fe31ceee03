"""Review: the lead's disputed queue and resolutions, pilot, category proposals, discussion."""
