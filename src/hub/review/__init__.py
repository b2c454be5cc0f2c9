"""Review: independent agent reviews, human decisions, findings and their resolution."""
