"""The verbs' libraries beside the detection pipeline (one module per task)."""
