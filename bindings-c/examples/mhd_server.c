/*
 * An MCP endpoint mounted in a libmicrohttpd server: the host owns the sockets, the threads
 * and the routing; mcpaxle serves what the host routes to /mcp (both protocol eras, SSE
 * streams included) through mcpaxle_mount_handle and the response's chunks.
 *
 *   mhd_server 127.0.0.1 3000                (endpoint http://127.0.0.1:3000/mcp; SIGINT/SIGTERM stop it)
 *   mhd_server 127.0.0.1 3000 --everything   (every conformance fixture, from everything_server.c)
 *
 * Build: cc mhd_server.c $(pkg-config --cflags --libs mcpaxle libmicrohttpd) -o mhd_server
 * (Debian: apt-get install libmicrohttpd-dev).
 *
 * libmicrohttpd runs a thread per connection here, so the access handler may block in
 * mcpaxle_mount_handle and the content reader in mcpaxle_http_response_read. When a client
 * goes away, libmicrohttpd frees the response (free_reply below), which cancels the request.
 */
#define _GNU_SOURCE
#include <mcpaxle.h>
#include <microhttpd.h>

/* The conformance fixtures of the everything server (its build(), without its main), for
 * --everything: the official suite then runs against the endpoint mounted here. */
#define MCPAXLE_EVERYTHING_NO_MAIN
#include "everything_server.c"

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest request body read (the endpoint's default maxBody is 4 MiB): one byte more and
 * mcpaxle answers 413. */
#define MAX_BODY (4u << 20)

/* A request being received: its body so far. */
struct upload {
    char *body;
    size_t len;
};

/* A response being sent: the mcpaxle response and the part of its last chunk not sent yet. */
struct reply {
    mcpaxle_http_response *response;
    const uint8_t *data;
    size_t len;
};

/* The request's header fields, collected for mcpaxle_mount_handle. */
struct fields {
    mcpaxle_http_header items[128];
    size_t count;
};

/* forecast: reports progress, then answers (an SSE stream, since something came before the answer). */
static void forecast(void *user_data, const char *args_json, mcpaxle_context *ctx, mcpaxle_reply *reply) {
    (void)user_data;
    (void)args_json;
    mcpaxle_context_progress(ctx, 50, 100, "looking outside");
    mcpaxle_reply_ok(reply, "\"Sunny\"");
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct fields *f = cls;
    if (f->count < sizeof f->items / sizeof f->items[0]) {
        f->items[f->count].name = key;
        f->items[f->count].value = value ? value : "";
        f->count++;
    }
    return MHD_YES;
}

/* libmicrohttpd's content reader: the body's chunks as mcpaxle yields them. */
static ssize_t read_reply(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    struct reply *r = cls;
    if (r->len == 0) {
        if (mcpaxle_http_response_read(r->response, &r->data, &r->len) != MCPAXLE_OK) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (r->len == 0) return MHD_CONTENT_READER_END_OF_STREAM;
    }
    size_t n = r->len < max ? r->len : max;
    memcpy(buf, r->data, n);
    r->data += n;
    r->len -= n;
    return (ssize_t)n;
}

/* Called by libmicrohttpd when the response is done or its client went away. */
static void free_reply(void *cls) {
    struct reply *r = cls;
    mcpaxle_http_response_cancel(r->response);
    mcpaxle_http_response_free(r->response);
    free(r);
}

static enum MHD_Result plain(struct MHD_Connection *conn, unsigned status, const char *text) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
    enum MHD_Result ok = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **con_cls) {
    (void)version;
    mcpaxle_mount *mount = cls;
    if (strcmp(url, "/mcp") != 0) return plain(conn, MHD_HTTP_NOT_FOUND, "Not Found\n");
    struct upload *up = *con_cls;
    if (up == NULL) { /* The first call: the headers are in, the body is to come. */
        up = calloc(1, sizeof *up);
        if (up == NULL) return MHD_NO;
        *con_cls = up;
        return MHD_YES;
    }
    if (*upload_size > 0) { /* A piece of the body: keep at most MAX_BODY + 1 bytes. */
        size_t room = MAX_BODY + 1 - up->len, n = *upload_size < room ? *upload_size : room;
        if (n > 0) {
            char *grown = realloc(up->body, up->len + n);
            if (grown == NULL) return MHD_NO;
            memcpy(grown + up->len, upload_data, n);
            up->body = grown;
            up->len += n;
        }
        *upload_size = 0;
        return MHD_YES;
    }

    struct fields headers = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, &headers);
    char peer[INET6_ADDRSTRLEN + 8] = "";
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info && info->client_addr && info->client_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)info->client_addr)->sin_addr, peer, sizeof peer);
    } else if (info && info->client_addr && info->client_addr->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)info->client_addr)->sin6_addr, peer, sizeof peer);
    }
    /* libmicrohttpd gives the path without the query: the endpoint needs no query. */
    mcpaxle_http_response *response = NULL;
    mcpaxle_result rc = mcpaxle_mount_handle(mount, method, url, headers.items, headers.count, (const uint8_t *)up->body,
                                             up->len, peer[0] ? peer : NULL, NULL, &response);
    if (rc != MCPAXLE_OK) {
        fprintf(stderr, "mhd_server: %s\n", mcpaxle_last_error_message());
        return plain(conn, rc == MCPAXLE_ERR_USAGE ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_INTERNAL_SERVER_ERROR, "mcpaxle failed\n");
    }
    struct reply *r = calloc(1, sizeof *r);
    if (r == NULL) {
        mcpaxle_http_response_free(response);
        return MHD_NO;
    }
    r->response = response;
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, read_reply, r, free_reply);
    for (size_t i = 0; i < mcpaxle_http_response_header_count(response); i++) {
        const char *name = NULL, *value = NULL;
        /* libmicrohttpd sets its own framing headers. */
        if (mcpaxle_http_response_header(response, i, &name, &value) == MCPAXLE_OK && strcmp(name, "content-length") != 0) {
            MHD_add_response_header(resp, name, value);
        }
    }
    enum MHD_Result ok = MHD_queue_response(conn, mcpaxle_http_response_status(response), resp);
    MHD_destroy_response(resp);
    return ok;
}

static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why) {
    (void)cls;
    (void)conn;
    (void)why;
    struct upload *up = *con_cls;
    if (up) {
        free(up->body);
        free(up);
        *con_cls = NULL;
    }
}

int main(int argc, char **argv) {
    bool everything = argc == 4 && strcmp(argv[3], "--everything") == 0;
    if (argc != 3 && !everything) {
        fprintf(stderr, "usage: mhd_server HOST PORT [--everything]\n");
        return 2;
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    mcpaxle_server *server = NULL;
    mcpaxle_mount *mount = NULL;
    if (everything) {
        server = build();
    } else if (mcpaxle_server_new("weather", "1.0.0", NULL, &server) != MCPAXLE_OK ||
               mcpaxle_server_add_tool(server, "{\"name\":\"forecast\",\"inputSchema\":{\"type\":\"object\"}}", forecast,
                                       NULL) != MCPAXLE_OK) {
        fprintf(stderr, "mhd_server: %s\n", mcpaxle_last_error_message());
        return 1;
    }
    if (mcpaxle_mount_new(server, "{\"allowedHosts\":[\"127.0.0.1\",\"localhost\"]}", &mount) != MCPAXLE_OK) {
        fprintf(stderr, "mhd_server: %s\n", mcpaxle_last_error_message());
        return 1;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
        fprintf(stderr, "mhd_server: %s is not an IPv4 address\n", argv[1]);
        return 2;
    }
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                            on_request, mount, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                            MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL, MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "mhd_server: cannot listen on %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    fprintf(stderr, "mhd_server: listening on http://%s:%s/mcp\n", argv[1], argv[2]);
    int sig = 0;
    sigwait(&stop, &sig);
    mcpaxle_server_stop(server); /* ends open listen streams, so that their connections finish */
    MHD_stop_daemon(d);
    mcpaxle_mount_free(mount);
    mcpaxle_server_free(server);
    return 0;
}
