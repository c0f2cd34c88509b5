"""TellOnce's learner: cue grammar, correction admission and rule extraction (and resolution)."""
