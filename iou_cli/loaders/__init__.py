"""Loaders: files -> :class:`iou_cli.data.Side`. ``sniff`` picks one by looking at the input."""
