"""The libraries of the verbs that are not protocol evaluations: semantic segmentation
(``segment``), multi-label sets (``labels``) and the ``iou`` verb's pairwise matrix
(``pairwise``)."""
