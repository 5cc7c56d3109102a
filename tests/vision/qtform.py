#!/usr/bin/python3
"""A small Qt5 form for the accessibility tests: a field, a check box and two
buttons; a click prints the button's name on stdout."""
import sys

from PyQt5.QtWidgets import (QApplication, QCheckBox, QHBoxLayout, QLineEdit, QPushButton,
                             QVBoxLayout, QWidget)

app = QApplication(sys.argv)
w = QWidget()
w.setWindowTitle("qtform")
v = QVBoxLayout(w)
field = QLineEdit()
field.setAccessibleName("Customer")
v.addWidget(field)
v.addWidget(QCheckBox("Express"))
row = QHBoxLayout()
for name in ("Save", "Discard"):
    b = QPushButton(name)
    b.clicked.connect(lambda _=False, n=name: print(n, flush=True))
    row.addWidget(b)
v.addLayout(row)
w.resize(360, 160)
w.show()
sys.exit(app.exec_())
