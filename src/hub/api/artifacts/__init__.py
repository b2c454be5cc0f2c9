"""artifacts over GraphQL (records, links, deletions) and over plain HTTP (uploads:
`upload`): files themselves do not travel through GraphQL."""
