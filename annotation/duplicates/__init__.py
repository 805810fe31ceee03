"""Near-duplicate issues (#29): an index of the items of a project whose texts say the same thing,
built in the background; the lead's duplicates and consistency queue; what volunteers may see."""
