/* robocache — command-line tool: dispatches to the subcommands. */
#define _GNU_SOURCE
#include "atomic_file.h"
#include "commands.h"
#include "robocache.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command rc_commands[] = {
    {"align", rc_cmd_align, "resample several recordings onto one time grid -> HDF5"},
    {"info", rc_cmd_info, "streams, rows, time span, rate, jitter and gaps of files"},
    {"voxelize", rc_cmd_voxelize, "point clouds -> voxel grids, hard voxels, downsampled clouds"},
};

#define RC_NUM_COMMANDS (sizeof rc_commands / sizeof rc_commands[0])

static void usage(FILE *out) {
  fprintf(out, "Usage: robocache [--help] [--version] COMMAND [ARGS...]\n"
               "\n"
               "Commands:\n");
  for (size_t i = 0; i < RC_NUM_COMMANDS; i++)
    fprintf(out, "  %-10s %s\n", rc_commands[i].name, rc_commands[i].summary);
  fprintf(out, "\n"
               "'robocache COMMAND --help' describes a command. Exit codes: 0 ok, 1 data or\n"
               "runtime error, 2 usage error, 3 I/O error.\n");
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
  int c;
  rc_io_remove_temp_on_signals(); /* Ctrl-C during a write leaves no temporary file */
  opterr = 0;
  while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
    switch (c) {
    case 'h': usage(stdout); return RC_EXIT_OK;
    case 'V': printf("robocache %s\n", robocache_version_string()); return RC_EXIT_OK;
    default:
      fprintf(stderr, "robocache: unknown option '%s'\n", argv[optind - 1]);
      usage(stderr);
      return RC_EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "robocache: missing COMMAND\n");
    usage(stderr);
    return RC_EXIT_USAGE;
  }
  for (size_t i = 0; i < RC_NUM_COMMANDS; i++)
    if (strcmp(argv[optind], rc_commands[i].name) == 0) {
      int sub_argc = argc - optind;
      char **sub_argv = argv + optind;
      optind = 0; /* glibc: restart getopt for the subcommand */
      return rc_commands[i].run(sub_argc, sub_argv);
    }
  fprintf(stderr, "robocache: unknown command '%s'\n", argv[optind]);
  usage(stderr);
  return RC_EXIT_USAGE;
}
