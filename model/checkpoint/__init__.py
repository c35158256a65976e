"""The checkpoint on disk and on the Hub: model.safetensors and config.json read strictly, the model card."""
