"""Interviews (issue 27): the study's practitioner interviews beside the labeled issues. Import
(codebook, background, guideline), quotes, mapping codes the taxonomy lacks, triangulation. The
data lives in taxonomy.interviews (its models and file parsers); every write is here, through the
gate."""
