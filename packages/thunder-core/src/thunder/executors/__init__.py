"""Built-in executors: ``torch`` (runs every symbol with PyTorch eager) and ``python`` (numbers and
prologue checks as plain Python). Both register through the plugin hooks, like third-party ones."""
