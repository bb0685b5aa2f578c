/* tests/tool/fake_server.c - a TCP server on 127.0.0.1 that is not Redis,
   for the tool's protocol-error and connect-timeout tests.

       fake_server SECONDS [PORTFILE [full]]

   Listens on a free loopback port, writes the port to PORTFILE (or
   stdout), answers every read with an HTTP error line (not RESP), and
   exits after SECONDS (or on SIGTERM). With "full" it never accepts: its
   accept queue (backlog 0) is filled by its own connections first, so
   the kernel drops further SYNs and a client's connect times out. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC 64

int main(int argc, char **argv)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    struct pollfd pf[MAXC + 1];
    int n = 1, one = 1, i;
    time_t end;
    const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    FILE *out = stdout;
    if (argc < 2) {
        fprintf(stderr, "usage: fake_server SECONDS [PORTFILE]\n");
        return 2;
    }
    end = time(NULL) + atoi(argv[1]);
    signal(SIGPIPE, SIG_IGN);
    pf[0].fd = socket(AF_INET, SOCK_STREAM, 0);
    if (pf[0].fd < 0) return 1;
    setsockopt(pf[0].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(pf[0].fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(pf[0].fd, argc > 3 ? 0 : 16) != 0 ||
        getsockname(pf[0].fd, (struct sockaddr *)&sa, &len) != 0)
        return 1;
    if (argc > 3 && strcmp(argv[3], "full") == 0) {
        for (i = 0; i < 4; i++) { /* fill the accept queue; the rest of the SYNs are dropped */
            int c = socket(AF_INET, SOCK_STREAM, 0);
            if (c < 0) return 1;
            fcntl(c, F_SETFL, fcntl(c, F_GETFL, 0) | O_NONBLOCK);
            (void)connect(c, (struct sockaddr *)&sa, sizeof sa);
        }
        if (argc > 2 && !(out = fopen(argv[2], "w"))) return 1;
        fprintf(out, "%d\n", ntohs(sa.sin_port));
        fclose(out);
        while (time(NULL) < end) sleep(1);
        return 0;
    }
    if (argc > 2 && !(out = fopen(argv[2], "w"))) return 1;
    fprintf(out, "%d\n", ntohs(sa.sin_port));
    fclose(out);
    pf[0].events = POLLIN;
    while (time(NULL) < end) {
        if (poll(pf, (nfds_t)n, 200) <= 0) continue;
        if ((pf[0].revents & POLLIN) && n <= MAXC) {
            int c = accept(pf[0].fd, NULL, NULL);
            if (c >= 0) {
                pf[n].fd = c;
                pf[n].events = POLLIN;
                pf[n].revents = 0;
                n++;
            }
        }
        for (i = 1; i < n; i++) {
            char buf[4096];
            ssize_t r;
            if (!pf[i].revents) continue;
            r = read(pf[i].fd, buf, sizeof buf);
            if (r > 0 && write(pf[i].fd, reply, sizeof reply - 1) > 0) continue;
            close(pf[i].fd);
            pf[i--] = pf[--n];
        }
    }
    return 0;
}
