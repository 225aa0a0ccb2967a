/* Subcommands of the `robocache` tool. Each takes the arguments after the
 * tool name (argv[0] is the subcommand's name) and returns an exit code.
 * To add a subcommand: declare rc_cmd_<name> here, write cli/cmd_<name>.c and
 * add one line to the table in cli/main.c. */
#ifndef ROBOCACHE_CLI_COMMANDS_H
#define ROBOCACHE_CLI_COMMANDS_H

/* Exit codes of every subcommand (docs/cli.md). */
enum {
  RC_EXIT_OK = 0,    /* success */
  RC_EXIT_DATA = 1,  /* invalid data or a runtime error (bad line, timestamps
                        not increasing, unknown column, no overlap, ...) */
  RC_EXIT_USAGE = 2, /* bad command line */
  RC_EXIT_IO = 3     /* a file cannot be opened, read or written */
};

int rc_cmd_align(int argc, char **argv);
int rc_cmd_info(int argc, char **argv);
int rc_cmd_voxelize(int argc, char **argv);

#endif
