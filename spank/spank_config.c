/* The plugin's settings: parsing and bounds (see spank_config.h). */
#include "spank_config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char* err, size_t errlen, const char* format, ...) {
  va_list args;
  va_start(args, format);
  if (errlen > 0) vsnprintf(err, errlen, format, args);
  va_end(args);
  return -1;
}

static int parse_int(const char* what, const char* text, long min, long max, int* out, char* err,
                     size_t errlen) {
  char* end = NULL;
  errno = 0;
  long value = text ? strtol(text, &end, 10) : 0;
  if (!text || *text == '\0' || *end != '\0')
    return fail(err, errlen, "%s: '%s' is not a whole number", what, text ? text : "");
  if (errno == ERANGE || value < min || value > max)
    return fail(err, errlen, "%s: %s is out of range (%ld to %ld)", what, text, min, max);
  *out = (int)value;
  return 0;
}

/* Seconds: "1", "0.5", "250ms", "2s", "1m". */
static int parse_seconds(const char* what, const char* text, double min, double max, double* out,
                         char* err, size_t errlen) {
  char* end = NULL;
  errno = 0;
  double value = text ? strtod(text, &end) : 0;
  if (!text || *text == '\0' || end == text)
    return fail(err, errlen, "%s: '%s' is not a duration (e.g. 1, 0.5s, 250ms, 1m)", what,
                text ? text : "");
  double scale = 1.0;
  if (strcmp(end, "ms") == 0) {
    scale = 1e-3;
  } else if (strcmp(end, "m") == 0) {
    scale = 60.0;
  } else if (*end != '\0' && strcmp(end, "s") != 0) {
    return fail(err, errlen, "%s: '%s' has an unknown unit (use ms, s or m)", what, text);
  }
  value *= scale;
  if (errno == ERANGE || !isfinite(value) || value < min || value > max)
    return fail(err, errlen, "%s: %s is out of range (%g s to %g s)", what, text, min, max);
  *out = value;
  return 0;
}

static int parse_path(const char* what, const char* text, char* out, size_t outlen, char* err,
                      size_t errlen) {
  if (!text || *text == '\0') return fail(err, errlen, "%s: needs a path", what);
  if (strlen(text) >= outlen)
    return fail(err, errlen, "%s: path longer than %zu bytes", what, outlen - 1);
  strcpy(out, text);
  return 0;
}

static int parse_flag(const char* what, const char* text, int* out, char* err, size_t errlen) {
  if (text && (strcmp(text, "1") == 0 || strcmp(text, "yes") == 0)) {
    *out = 1;
  } else if (text && (strcmp(text, "0") == 0 || strcmp(text, "no") == 0)) {
    *out = 0;
  } else {
    return fail(err, errlen, "%s: '%s' is not 0, 1, yes or no", what, text ? text : "");
  }
  return 0;
}

void tm_spank_config_defaults(struct tm_spank_config* config, const char* default_launcher) {
  memset(config, 0, sizeof *config);
  config->record_steps = 2;
  config->heartbeat_s = 1.0;
  config->poll_s = 5.0;
  snprintf(config->launcher, sizeof config->launcher, "%s",
           default_launcher ? default_launcher : "trainmover-launch");
}

/* The settings, by their option name (dashes; NULL: plugstack.conf only)
 * and their plugstack.conf key (underscores). */
enum setting {
  SET_STANDBY,
  SET_RECORD_STEPS,
  SET_HEARTBEAT,
  SET_TRACE_DIR,
  SET_EVENTS,
  SET_ENABLED,
  SET_LAUNCHER,
  SET_SRUN_LIB,
  SET_BIND,
  SET_POLL,
  SET_UNKNOWN
};
static const struct {
  const char* option;
  const char* key;
  enum setting setting;
} settings[] = {
    {"standby", "standby", SET_STANDBY},
    {"record-steps", "record_steps", SET_RECORD_STEPS},
    {"heartbeat", "heartbeat", SET_HEARTBEAT},
    {"trace-dir", "trace_dir", SET_TRACE_DIR},
    {"events", "events", SET_EVENTS},
    {NULL, "enabled", SET_ENABLED},
    {NULL, "launcher", SET_LAUNCHER},
    {NULL, "srun_lib", SET_SRUN_LIB},
    {NULL, "bind", SET_BIND},
    {NULL, "poll", SET_POLL},
};

static enum setting find_setting(const char* name, int by_key) {
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; ++i) {
    const char* known = by_key ? settings[i].key : settings[i].option;
    if (known && strcmp(known, name) == 0) return settings[i].setting;
  }
  return SET_UNKNOWN;
}

/* Parses `value` into the field of `setting`; `what` names it in messages. */
static int set_value(struct tm_spank_config* c, enum setting setting, const char* value,
                     const char* what, char* err, size_t errlen) {
  switch (setting) {
    case SET_STANDBY:
      return parse_int(what, value, 0, TM_SPANK_MAX_STANDBY, &c->standby, err, errlen);
    case SET_RECORD_STEPS:
      return parse_int(what, value, 0, TM_SPANK_MAX_RECORD_STEPS, &c->record_steps, err, errlen);
    case SET_HEARTBEAT:
      return parse_seconds(what, value, TM_SPANK_MIN_HEARTBEAT_S, TM_SPANK_MAX_HEARTBEAT_S,
                           &c->heartbeat_s, err, errlen);
    case SET_TRACE_DIR:
      return parse_path(what, value, c->trace_dir, sizeof c->trace_dir, err, errlen);
    case SET_EVENTS:
      return parse_path(what, value, c->events, sizeof c->events, err, errlen);
    case SET_ENABLED:
      return parse_flag(what, value, &c->enabled, err, errlen);
    case SET_LAUNCHER:
      return parse_path(what, value, c->launcher, sizeof c->launcher, err, errlen);
    case SET_SRUN_LIB:
      return parse_path(what, value, c->srun_lib, sizeof c->srun_lib, err, errlen);
    case SET_BIND:
      if (!value || *value == '\0') return fail(err, errlen, "%s: needs an address", what);
      return parse_path(what, value, c->bind, sizeof c->bind, err, errlen);
    case SET_POLL:
      return parse_seconds(what, value, TM_SPANK_MIN_POLL_S, TM_SPANK_MAX_POLL_S, &c->poll_s, err,
                           errlen);
    case SET_UNKNOWN:
      break;
  }
  return fail(err, errlen, "%s: unknown setting", what);
}

int tm_spank_config_set_option(struct tm_spank_config* config, const char* name, const char* value,
                               char* err, size_t errlen) {
  char what[96];
  snprintf(what, sizeof what, "--trainmover%s%s", *name ? "-" : "", name);
  if (*name != '\0' && set_value(config, find_setting(name, 0), value, what, err, errlen) != 0)
    return -1;
  config->enabled = 1;
  return 0;
}

static int set_arg(struct tm_spank_config* config, const char* arg, char* err, size_t errlen) {
  const char* equals = strchr(arg, '=');
  if (!equals || equals == arg)
    return fail(err, errlen, "plugstack.conf argument '%s' is not key=value", arg);
  char key[64];
  size_t keylen = (size_t)(equals - arg);
  if (keylen >= sizeof key) return fail(err, errlen, "plugstack.conf key in '%s' is too long", arg);
  memcpy(key, arg, keylen);
  key[keylen] = '\0';
  enum setting setting = find_setting(key, 1);
  if (setting == SET_UNKNOWN)
    return fail(err, errlen,
                "plugstack.conf key '%s' is unknown (known: enabled, standby, record_steps, "
                "trace_dir, events, heartbeat, launcher, srun_lib, bind, poll)",
                key);
  char what[96];
  snprintf(what, sizeof what, "plugstack.conf %s", key);
  return set_value(config, setting, equals + 1, what, err, errlen);
}

int tm_spank_config_parse_args(struct tm_spank_config* config, int argc, char** argv, char* err,
                               size_t errlen) {
  for (int i = 0; i < argc; ++i)
    if (set_arg(config, argv[i], err, errlen) != 0) return -1;
  return 0;
}

int tm_spank_config_check_nodes(const struct tm_spank_config* config, unsigned nnodes, char* err,
                                size_t errlen) {
  if (config->enabled && (unsigned)config->standby >= nnodes)
    return fail(err, errlen,
                "--trainmover-standby=%d leaves no active node in a step of %u node%s "
                "(ask for more nodes with -N)",
                config->standby, nnodes, nnodes == 1 ? "" : "s");
  return 0;
}
