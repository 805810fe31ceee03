"""A project's labels as arrays (labels) and its agreement figures' tallies (tallies): below both
the writes that keep the tallies (labeling, review) and the reports that read them."""
