/* The step's node states from slurmctld (see node_watch.h). */
#include "node_watch.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <string.h>

static void copy(char* out, size_t size, const char* text) {
  snprintf(out, size, "%s", text ? text : "");
}

static struct tm_node_status* find(struct tm_node_status* nodes, size_t count, const char* name) {
  for (size_t i = 0; i < count; ++i)
    if (name && strcmp(nodes[i].name, name) == 0) return &nodes[i];
  return NULL;
}

static void apply_node(struct tm_node_status* node, const node_info_t* info) {
  uint32_t base = info->node_state & NODE_STATE_BASE;
  node->found = 1;
  node->draining = (info->node_state & NODE_STATE_DRAIN) != 0;
  node->down = base == NODE_STATE_DOWN || (info->node_state & NODE_STATE_FAIL) != 0;
  copy(node->reason, sizeof node->reason, info->reason);
}

/* Does a maintenance reservation that has not ended cover `node`? Keeps the
 * earliest. */
static void apply_reservation(struct tm_node_status* nodes, size_t count,
                              const reserve_info_t* resv, time_t now) {
  if (!(resv->flags & RESERVE_FLAG_MAINT) || resv->end_time <= now || !resv->node_list) return;
  int all = strcmp(resv->node_list, "ALL") == 0;
  hostlist_t hosts = all ? NULL : slurm_hostlist_create(resv->node_list);
  if (!all && !hosts) return;
  for (size_t i = 0; i < count; ++i) {
    if (!all && slurm_hostlist_find(hosts, nodes[i].name) < 0) continue;
    if (nodes[i].maint_start != 0 && nodes[i].maint_start <= resv->start_time) continue;
    nodes[i].maint_start = resv->start_time;
    copy(nodes[i].maint_name, sizeof nodes[i].maint_name, resv->name);
  }
  if (hosts) slurm_hostlist_destroy(hosts);
}

int tm_node_watch_poll(struct tm_node_status* nodes, size_t count, char* err, size_t errlen) {
  node_info_msg_t* node_msg = NULL;
  reserve_info_msg_t* resv_msg = NULL;
  if (slurm_load_node((time_t)0, &node_msg, SHOW_ALL) != SLURM_SUCCESS) {
    snprintf(err, errlen, "cannot load node states from slurmctld: %s",
             slurm_strerror(slurm_get_errno()));
    return -1;
  }
  if (slurm_load_reservations((time_t)0, &resv_msg) != SLURM_SUCCESS) {
    snprintf(err, errlen, "cannot load reservations from slurmctld: %s",
             slurm_strerror(slurm_get_errno()));
    slurm_free_node_info_msg(node_msg);
    return -1;
  }
  for (size_t i = 0; i < count; ++i) {
    nodes[i].found = nodes[i].draining = nodes[i].down = 0;
    nodes[i].reason[0] = nodes[i].maint_name[0] = '\0';
    nodes[i].maint_start = 0;
  }
  for (uint32_t i = 0; i < node_msg->record_count; ++i) {
    struct tm_node_status* node = find(nodes, count, node_msg->node_array[i].name);
    if (node) apply_node(node, &node_msg->node_array[i]);
  }
  time_t now = time(NULL);
  for (uint32_t i = 0; i < resv_msg->record_count; ++i)
    apply_reservation(nodes, count, &resv_msg->reservation_array[i], now);
  slurm_free_reservation_info_msg(resv_msg);
  slurm_free_node_info_msg(node_msg);
  return 0;
}
