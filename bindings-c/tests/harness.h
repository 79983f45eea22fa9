/*
 * A tiny test harness for the C tests: CHECK macros, TEST/RUN, a closing "N passed, N failed"
 * line, and a minimal HTTP/1.1 client that speaks MCP's Streamable HTTP to a local server.
 */
#ifndef MCPAXLE_TEST_HARNESS_H
#define MCPAXLE_TEST_HARNESS_H

#include <mcpaxle.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int tests_passed, tests_failed, current_failures;
__attribute__((unused)) static const char *self_path;

#define CHECK(cond)                                                                                  \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            current_failures++;                                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond,        \
                    mcpaxle_last_error_message());                                                   \
        }                                                                                            \
    } while (0)

#define CHECK_RC(expr, expected)                                                                     \
    do {                                                                                             \
        int _got = (int)(expr), _want = (int)(expected);                                             \
        if (_got != _want) {                                                                         \
            current_failures++;                                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, \
                    #expr, mcpaxle_result_name(_got), mcpaxle_result_name(_want),                    \
                    mcpaxle_last_error_message());                                                   \
        }                                                                                            \
    } while (0)

#define CHECK_STR(got, want)                                                                         \
    do {                                                                                             \
        const char *_g = (got), *_w = (want);                                                        \
        if (!_g || strcmp(_g, _w) != 0) {                                                            \
            current_failures++;                                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__,     \
                    #got, _g ? _g : "(null)", _w);                                                   \
        }                                                                                            \
    } while (0)

/* The value at `pointer` of the response `body` (a JSON object, or the final SSE event), as
 * mcpaxle_json_get_string renders it, equals `want`. */
#define CHECK_JSON(body, pointer, want)                                                              \
    do {                                                                                             \
        char *_v = json_at((body), (pointer));                                                       \
        if (!_v || strcmp(_v, (want)) != 0) {                                                        \
            current_failures++;                                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s is %s, expected %s\n    in %s\n", __FILE__, __LINE__,  \
                    pointer, _v ? _v : "(missing)", want, (body) ? (body) : "(no response)");        \
        }                                                                                            \
        free(_v);                                                                                    \
    } while (0)

#define TEST(name) static void test_##name(void)
#define RUN(name)                                                                                    \
    do {                                                                                             \
        current_failures = 0;                                                                        \
        test_##name();                                                                               \
        if (current_failures == 0) {                                                                 \
            tests_passed++;                                                                          \
            printf("ok - %s\n", #name);                                                              \
        } else {                                                                                     \
            tests_failed++;                                                                          \
            printf("not ok - %s (%d failed checks)\n", #name, current_failures);                     \
        }                                                                                            \
        fflush(stdout);                                                                              \
    } while (0)

__attribute__((unused)) static int summary(void) {
    printf("%d passed, %d failed\n", tests_passed, tests_failed);
    return tests_failed == 0 ? 0 : 1;
}

__attribute__((unused)) static char *fmt(const char *format, ...) {
    va_list ap;
    char *s = NULL;
    va_start(ap, format);
    if (vasprintf(&s, format, ap) < 0) s = NULL;
    va_end(ap);
    if (!s) abort();
    return s;
}

/* Replies to a tool call with one text content block holding `text`; the reply's result. */
__attribute__((unused)) static mcpaxle_result reply_text(mcpaxle_reply *c, const char *text) {
    char *q = NULL;
    mcpaxle_json_quote(text, &q);
    char *json = fmt("{\"content\":[{\"type\":\"text\",\"text\":%s}]}", q);
    mcpaxle_result rc = mcpaxle_reply_ok(c, json);
    free(json), mcpaxle_string_free(q);
    return rc;
}

__attribute__((unused)) static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* The JSON of a response body: the body itself, or the data of its last SSE event. */
__attribute__((unused)) static char *response_json(const char *body) {
    if (!body) return NULL;
    if (body[0] == '{') return strdup(body);
    const char *last = NULL, *p = body;
    while ((p = strstr(p, "data: ")) != NULL) {
        last = p + 6;
        p += 6;
    }
    if (!last) return NULL;
    size_t n = strcspn(last, "\r\n");
    return strndup(last, n);
}

__attribute__((unused)) static char *json_at(const char *body, const char *pointer) {
    char *json = response_json(body), *v = NULL, *copy = NULL;
    if (json && mcpaxle_json_get_string(json, pointer, &v) == MCPAXLE_OK && v) copy = strdup(v);
    mcpaxle_string_free(v);
    free(json);
    return copy;
}

/* ---- the shared case tables (the JSON files of tests/ at the repository root) -------------- */

/* The text of the shared table tests/`name`, or NULL. The caller frees it. */
__attribute__((unused)) static char *shared_table(const char *name) {
    char *dir = strdup(__FILE__), *path = fmt("%s/../../tests/%s", dirname(dir), name), *text = NULL;
    FILE *f = fopen(path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = calloc((size_t)n + 1, 1);
        if (text && fread(text, 1, (size_t)n, f) != (size_t)n) free(text), text = NULL;
    }
    if (f) fclose(f);
    free(dir), free(path);
    return text;
}

/* The JSON text at `pointer` of `json` (a copy the caller frees), NULL when there is none. */
__attribute__((unused)) static char *json_value(const char *json, const char *pointer) {
    char *v = NULL, *copy = NULL;
    if (mcpaxle_json_get(json, pointer, &v) == MCPAXLE_OK && v) copy = strdup(v);
    mcpaxle_string_free(v);
    return copy;
}

/* The string at `pointer` of `json` as its text (a copy the caller frees), NULL when none. */
__attribute__((unused)) static char *json_text(const char *json, const char *pointer) {
    char *v = NULL, *copy = NULL;
    if (mcpaxle_json_get_string(json, pointer, &v) == MCPAXLE_OK && v) copy = strdup(v);
    mcpaxle_string_free(v);
    return copy;
}

/* The elements or members at `pointer` of `json`. */
__attribute__((unused)) static size_t json_count(const char *json, const char *pointer) {
    size_t n = 0;
    return mcpaxle_json_length(json, pointer, &n) == MCPAXLE_OK ? n : 0;
}

/* The object `valid` with the members of the object `set` applied, a null removing one: the
 * options of one case of tests/auth_option_cases.json. The caller frees it. */
__attribute__((unused)) static char *overlay(const char *valid, const char *set) {
    char *out = strdup(""), *keys = NULL;
    for (int pass = 0; pass < 2; pass++) {
        const char *from = pass == 0 ? valid : set;
        mcpaxle_json_keys(from, "", &keys);
        size_t n = json_count(keys, "");
        for (size_t i = 0; i < n; i++) {
            char *p = fmt("/%zu", i), *key = json_text(keys, p), *kp = fmt("/%s", key);
            char *overridden = pass == 0 ? json_value(set, kp) : NULL, *v = json_value(from, kp);
            if (!overridden && v && strcmp(v, "null") != 0) {
                char *next = fmt("%s%s\"%s\":%s", out, out[0] ? "," : "", key, v);
                free(out), out = next;
            }
            free(overridden), free(v), free(p), free(key), free(kp);
        }
        mcpaxle_string_free(keys), keys = NULL;
    }
    char *done = fmt("{%s}", out);
    free(out);
    return done;
}

/* Whether the error message `got` says "<path>: <message>" (`message` alone for an empty path). */
__attribute__((unused)) static bool says(const char *got, const char *path, const char *message) {
    char *want = path && path[0] ? fmt("%s: %s", path, message) : strdup(message);
    bool ok = got && strstr(got, want) != NULL;
    free(want);
    return ok;
}

__attribute__((unused)) static mcpaxle_server *new_server(const char *options) {
    mcpaxle_server *s = NULL;
    if (mcpaxle_server_new("test-server", "1.0.0", options, &s) != MCPAXLE_OK) {
        fprintf(stderr, "mcpaxle_server_new: %s\n", mcpaxle_last_error_message());
        abort();
    }
    return s;
}

__attribute__((unused)) static mcpaxle_http_server *start_http(mcpaxle_server *s, uint16_t *port) {
    mcpaxle_http_server *h = NULL;
    if (mcpaxle_http_server_start(s, "127.0.0.1:0", NULL, &h) != MCPAXLE_OK || mcpaxle_http_server_port(h, port) != MCPAXLE_OK) {
        fprintf(stderr, "mcpaxle_http_server_start: %s\n", mcpaxle_last_error_message());
        abort();
    }
    return h;
}

/* A client of the local server on `port`, connected with `o` (freed here); NULL when it fails. */
__attribute__((unused)) static mcpaxle_client *connect_local(uint16_t port, mcpaxle_client_options *o) {
    char *url = fmt("http://127.0.0.1:%u/mcp", (unsigned)port);
    mcpaxle_client *c = NULL;
    CHECK_RC(mcpaxle_client_connect_http(url, o, &c), MCPAXLE_OK);
    free(url);
    mcpaxle_client_options_free(o);
    return c;
}

__attribute__((unused)) static uint16_t free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

__attribute__((unused)) static int connect_port(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

__attribute__((unused)) static bool wait_for_port(uint16_t port) {
    for (int i = 0; i < 500; i++) {
        int fd = connect_port(port);
        if (fd >= 0) {
            close(fd);
            return true;
        }
        sleep_ms(20);
    }
    return false;
}

/* Decodes a chunked body in place. */
__attribute__((unused)) static void dechunk(char *body) {
    char *in = body, *out = body;
    for (;;) {
        char *end = NULL;
        unsigned long n = strtoul(in, &end, 16);
        if (end == in) break;
        char *data = strstr(end, "\r\n");
        if (!data || n == 0) break;
        data += 2;
        memmove(out, data, n);
        out += n;
        in = data + n;
        if (strncmp(in, "\r\n", 2) == 0) in += 2;
    }
    *out = '\0';
}

/* An HTTP response: its status (0 when the exchange failed), its header lines and its body
 * (dechunked). Free it with http_response_free. */
struct http_response {
    int status;
    char *head;
    char *body;
};

__attribute__((unused)) static void http_response_free(struct http_response *r) {
    free(r->head), free(r->body);
    memset(r, 0, sizeof *r);
}

/* The value of header `name` in a response (free it), or NULL. */
__attribute__((unused)) static char *http_header(const struct http_response *r, const char *name) {
    size_t n = strlen(name);
    for (const char *line = r->head; line && *line;) {
        if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
            const char *v = line + n + 1;
            while (*v == ' ') v++;
            return strndup(v, strcspn(v, "\r\n"));
        }
        line = strstr(line, "\r\n");
        if (line) line += 2;
    }
    return NULL;
}

/* Sends `method` `path` to 127.0.0.1:port with the given extra headers ("Name: value\r\n" each)
 * and body (NULL for none); reads the whole response. */
__attribute__((unused)) static struct http_response http_request(uint16_t port, const char *method, const char *path, const char *headers,
                                                                 const char *body) {
    struct http_response r = {0};
    int fd = connect_port(port);
    if (fd < 0) return r;
    struct timeval tv = {30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char *length = body ? fmt("Content-Length: %zu\r\n", strlen(body)) : strdup("");
    char *req = fmt("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n%s%s\r\n%s", method, path, (unsigned)port,
                    headers, length, body ? body : "");
    free(length);
    size_t len = strlen(req), sent = 0;
    while (sent < len) {
        ssize_t n = write(fd, req + sent, len - sent);
        if (n <= 0) break;
        sent += (size_t)n;
    }
    free(req);
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (used + 1024 > cap) buf = realloc(buf, cap *= 2);
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n <= 0) break;
        used += (size_t)n;
    }
    close(fd);
    buf[used] = '\0';
    char *sep = strstr(buf, "\r\n\r\n");
    if (!sep || sscanf(buf, "HTTP/1.1 %d", &r.status) != 1) {
        free(buf);
        r.status = 0;
        return r;
    }
    *sep = '\0';
    r.body = strdup(sep + 4);
    char *eol = strstr(buf, "\r\n");
    r.head = strdup(eol ? eol + 2 : "");
    free(buf);
    char *te = http_header(&r, "transfer-encoding");
    if (te && strcasecmp(te, "chunked") == 0) dechunk(r.body);
    free(te);
    return r;
}

static atomic_int next_id = 1;

/* An MCP request of the 2026-07-28 revision, with `extra` headers ("Name: value\r\n" each):
 * `params` are the members of `params` (without `_meta`), `meta` extra `_meta` members (or
 * NULL), `caps` the client capabilities. Returns the whole response. */
__attribute__((unused)) static struct http_response mcp_exchange(uint16_t port, const char *extra, const char *method, const char *name,
                                                                 const char *params, const char *meta, const char *caps) {
    char *headers = fmt("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: %s\r\n%s%s%s%s",
                        method, name ? "Mcp-Name: " : "", name ? name : "", name ? "\r\n" : "", extra);
    char *body = fmt("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
                     "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                     "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c-tests\",\"version\":\"1\"},"
                     "\"io.modelcontextprotocol/clientCapabilities\":%s%s%s}}}",
                     atomic_fetch_add(&next_id, 1), method, params, params[0] ? "," : "", caps, meta ? "," : "", meta ? meta : "");
    struct http_response r = http_request(port, "POST", "/mcp", headers, body);
    free(headers), free(body);
    return r;
}

/* The body of an MCP request's response (free it), or NULL when the exchange failed. */
__attribute__((unused)) static char *mcp_full(uint16_t port, const char *method, const char *name, const char *params, const char *meta, const char *caps) {
    struct http_response r = mcp_exchange(port, "", method, name, params, meta, caps);
    char *body = r.body;
    r.body = NULL;
    http_response_free(&r);
    return body;
}

__attribute__((unused)) static char *mcp(uint16_t port, const char *method, const char *name, const char *params, const char *meta) {
    return mcp_full(port, method, name, params, meta, "{\"sampling\":{},\"elicitation\":{},\"roots\":{}}");
}

__attribute__((unused)) static char *mcp_caps(uint16_t port, const char *method, const char *name, const char *params, const char *caps) {
    return mcp_full(port, method, name, params, NULL, caps);
}

/* Reads one line from a file descriptor (without its newline; free it). */
__attribute__((unused)) static char *read_line_fd(int fd) {
    size_t cap = 1024, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        char ch;
        ssize_t n = read(fd, &ch, 1);
        if (n <= 0 || ch == '\n') break;
        if (used + 2 > cap) buf = realloc(buf, cap *= 2);
        buf[used++] = ch;
    }
    buf[used] = '\0';
    return buf;
}

#endif
