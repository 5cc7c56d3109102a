#!/bin/bash
URL="https://raw.githubusercontent.com/datasets/covid-19/main/data/countries-aggregated.csv"
curl -L --fail -o countries.csv "$URL"
wc -l countries.csv
head -5 countries.csv
