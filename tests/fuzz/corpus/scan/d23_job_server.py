import pickle
import socket

server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.bind(("0.0.0.0", 9000))
server.listen(5)
while True:
    conn, addr = server.accept()
    data = conn.recv(65536)
    job = pickle.loads(data)
    result = job.run()
    conn.sendall(pickle.dumps(result))
    conn.close()
