import csv
from openpyxl import Workbook

wb = Workbook()
ws = wb.active
ws.title = "Contacts"
with open("contacts.csv", newline="") as f:
    for row in csv.reader(f):
        ws.append(row)
for col in ws.columns:
    width = max(len(str(c.value or "")) for c in col) + 2
    ws.column_dimensions[col[0].column_letter].width = width
wb.save("contacts.xlsx")
print("wrote contacts.xlsx")
