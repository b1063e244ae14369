-- WITHOUT ROWID, added by hand (drizzle-kit cannot say it): the counters are written in every
-- commit that records an attempt, and keyed by their primary key they are one B-tree, not two.
CREATE TABLE `endpoint_hours` (
	`endpoint_id` text NOT NULL,
	`hour` integer NOT NULL,
	`succeeded` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`parked` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`endpoint_id`, `hour`),
	FOREIGN KEY (`endpoint_id`) REFERENCES `endpoints`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
-- The counts so far, from the attempts and parked deliveries still in retention (as the stats
-- query counted them before this table).
INSERT INTO `endpoint_hours` (`endpoint_id`, `hour`, `succeeded`, `failed`, `parked`)
SELECT `endpoint_id`, `hour`, SUM(`succeeded`), SUM(`failed`), SUM(`parked`) FROM (
	SELECT d.`endpoint_id`, (a.`at` / 3600000) * 3600000 AS `hour`,
		CASE WHEN a.`status_code` BETWEEN 200 AND 299 THEN 1 ELSE 0 END AS `succeeded`,
		CASE WHEN a.`status_code` BETWEEN 200 AND 299 THEN 0 ELSE 1 END AS `failed`,
		0 AS `parked`
	FROM `attempts` a JOIN `deliveries` d ON d.`id` = a.`delivery_id`
	UNION ALL
	SELECT `endpoint_id`, (`updated_at` / 3600000) * 3600000, 0, 0, 1 FROM `deliveries` WHERE `status` = 'parked'
) GROUP BY `endpoint_id`, `hour`;
