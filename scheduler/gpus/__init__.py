"""GPUs as the GPU-sharing plugins and the replay's measures see them."""
