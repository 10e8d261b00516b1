"""RULER's synthetic long-context tasks (Hsieh et al. 2024): configurations and generators."""
