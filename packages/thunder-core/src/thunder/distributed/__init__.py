"""Distributed training on PyTorch's engine (DDP, FSDP2), compiled by thunder. See docs/distributed.md."""
