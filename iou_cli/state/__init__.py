"""Mergeable evaluation state (issue 24): the map's match records per prediction
(``partial``), built from a protocol run on some images (``build``), reduced through the
protocols' own accumulation (``reduce``), as bytes (``codec``, docs/partial-format.md), on
disk (``files``) and over worker processes (``jobs``)."""
