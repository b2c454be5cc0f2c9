"""jobs: external runs (tests, builds, deployments), their evidence, and watch windows."""
