#include <mcpaxle.h>
#include <stdio.h>

/* Runs on a runtime thread (blocking is fine); completes now or later, from any thread. */
static void greet(void *user_data, const char *args_json, mcpaxle_context *ctx, mcpaxle_reply *done) {
    char *name = NULL, *quoted = NULL, result[512];
    mcpaxle_json_get_string(args_json, "/name", &name);      /* read the arguments */
    mcpaxle_json_quote(name ? name : "stranger", &quoted);   /* escape for JSON */
    snprintf(result, sizeof result, "{\"content\":[{\"type\":\"text\",\"text\":%s}]}", quoted);
    mcpaxle_reply_ok(done, result);                           /* exactly once */
    mcpaxle_string_free(name), mcpaxle_string_free(quoted);
}

int main(int argc, char **argv) {
    const char *address = argc > 1 ? argv[1] : "127.0.0.1:3000";
    mcpaxle_server *server = NULL;
    if (mcpaxle_server_new("greeter", "1.0.0", NULL, &server) != MCPAXLE_OK) return 1;
    mcpaxle_server_add_tool(server,
        "{\"name\":\"greet\",\"description\":\"Says hello\",\"inputSchema\":{\"type\":\"object\","
        "\"properties\":{\"name\":{\"type\":\"string\"}}}}", greet, NULL);
    mcpaxle_result r = mcpaxle_server_serve_http(server, address, NULL);  /* blocks; endpoint /mcp */
    if (r != MCPAXLE_OK) fprintf(stderr, "%s: %s\n", mcpaxle_result_name(r), mcpaxle_last_error_message());
    mcpaxle_server_free(server);  /* no callback runs after this returns */
    return r == MCPAXLE_OK ? 0 : 1;
}
