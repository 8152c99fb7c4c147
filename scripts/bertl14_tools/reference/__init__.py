"""Running a model on the PC exactly as the device does: the integer engine, the C library through ctypes, the lookup tables, tagging, answers, the predict and eval commands, the slot metric."""
