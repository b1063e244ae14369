-- The request log moves to a file of its own (src/store/sqlite/request-log-file.ts): its tables are
-- renamed here, and the first store opened on this database copies their rows there and drops them.
ALTER TABLE `request_log` RENAME TO `moved_request_log`;--> statement-breakpoint
ALTER TABLE `usage_hours` RENAME TO `moved_usage_hours`;
