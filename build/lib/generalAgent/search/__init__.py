"""The searchable store under documents and knowledge: indexes.db, chunking, segmentation,
query building, ranking, content budgets and embeddings. Knows nothing of files or notes."""
