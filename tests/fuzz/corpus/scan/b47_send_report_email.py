import smtplib
from email.message import EmailMessage

msg = EmailMessage()
msg["Subject"] = "Weekly report"
msg["From"] = "reports@example.com"
msg["To"] = "team@example.com"
msg.set_content(open("report.txt").read())
with smtplib.SMTP("localhost", 1025) as s:
    s.send_message(msg)
print("sent")
