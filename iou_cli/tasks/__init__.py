"""The libraries of the verbs that are not protocol evaluations: semantic segmentation
(``segment``), multi-label sets (``labels``), the ``iou`` verb's pairwise matrix
(``pairwise``) and panoptic segmentation (``panoptic``, ``panoptic_match``,
``panoptic_compare``)."""
