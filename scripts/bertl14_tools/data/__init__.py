"""Training data: datasets from intent templates, augmentation, the user's intents files, and the hand-written data files beside these modules."""
