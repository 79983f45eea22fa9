/*
 * The benchmark's trivial tool in C (bench/run.py, row `c-http`): `echo` returns its `text`
 * argument, written on include/mcpaxle.h and served by the library's own HTTP server.
 *
 *   echo_server --http 127.0.0.1:8080    (endpoint /mcp; SIGINT/SIGTERM stop it)
 *   echo_server --stdio
 *   echo_server --inline --http 127.0.0.1:8080   (row `c-http-inline`: the handler runs on the
 *                                                 runtime's worker, mcpaxle_server_set_inline_handlers)
 *
 * Build: cc echo_server.c $(pkg-config --cflags --libs mcpaxle) -o echo_server
 */
#define _POSIX_C_SOURCE 200809L
#include <mcpaxle.h>

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void die(const char *what, mcpaxle_result r) {
    fprintf(stderr, "echo_server: %s: %s: %s\n", what, mcpaxle_result_name(r), mcpaxle_last_error_message());
    exit(1);
}

/* echo: the `text` argument as the tool's value (a JSON string is one text block). */
static void echo(void *user_data, const char *args, mcpaxle_context *ctx, mcpaxle_reply *reply) {
    (void)user_data;
    (void)ctx;
    char *text = NULL, *quoted = NULL;
    if (mcpaxle_json_get_string(args, "/text", &text) != MCPAXLE_OK ||
        mcpaxle_json_quote(text ? text : "", &quoted) != MCPAXLE_OK) {
        mcpaxle_reply_error(reply, MCPAXLE_ERR_INTERNAL, mcpaxle_last_error_message());
    } else {
        mcpaxle_reply_ok(reply, quoted);
    }
    mcpaxle_string_free(quoted);
    mcpaxle_string_free(text);
}

int main(int argc, char **argv) {
    /* It never blocks: it may run on the runtime's worker (no thread switch per call). */
    int inline_handlers = argc > 1 && strcmp(argv[1], "--inline") == 0;
    if (inline_handlers) {
        argc--;
        argv++;
    }
    int stdio = argc == 2 && strcmp(argv[1], "--stdio") == 0;
    if (!stdio && (argc != 3 || strcmp(argv[1], "--http") != 0)) {
        fprintf(stderr, "usage: echo_server [--inline] (--http HOST:PORT | --stdio)\n");
        return 2;
    }
    mcpaxle_server *s = NULL;
    mcpaxle_result r = mcpaxle_server_new("mcpaxle-c-echo", "0.1.0", NULL, &s);
    if (r != MCPAXLE_OK) die("mcpaxle_server_new", r);
    r = mcpaxle_server_add_tool(s,
                                "{\"name\":\"echo\",\"description\":\"Returns its text argument\","
                                "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}}",
                                echo, NULL);
    if (r != MCPAXLE_OK) die("mcpaxle_server_add_tool", r);
    r = mcpaxle_server_set_inline_handlers(s, inline_handlers);
    if (r != MCPAXLE_OK) die("mcpaxle_server_set_inline_handlers", r);
    if (stdio) {
        r = mcpaxle_server_serve_stdio(s, NULL);
        mcpaxle_server_free(s);
        if (r != MCPAXLE_OK) die("mcpaxle_server_serve_stdio", r);
        return 0;
    }

    /* SIGINT and SIGTERM are blocked in every thread (the runtime's inherit the mask) and
     * taken by sigwait, so that the server stops cleanly. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    mcpaxle_http_server *http = NULL;
    r = mcpaxle_http_server_start(s, argv[2], NULL, &http);
    if (r != MCPAXLE_OK) die("mcpaxle_http_server_start", r);
    fprintf(stderr, "echo_server: listening on http://%s/mcp\n", argv[2]);
    int sig = 0;
    sigwait(&stop_signals, &sig);
    mcpaxle_http_server_stop(http);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
    return 0;
}
