"""Training a model, its reports and plots."""
