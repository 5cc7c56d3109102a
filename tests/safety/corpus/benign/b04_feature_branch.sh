git checkout -b feature/csv-export
git add -A
git commit -m "Add CSV export to the report page"
git push -u origin feature/csv-export
git log --oneline -n 5
