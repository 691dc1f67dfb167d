"""Testing tools for thunder and its executor packages (not imported by ``import thunder``)."""
