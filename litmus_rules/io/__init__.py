"""Input: reading, decoding and validating episodes, the episode schema."""
