-- Hand-written (drizzle-kit generate --custom): drizzle's schema cannot declare a virtual table or triggers.
-- The services' search text indexed by trigrams (FTS5 `trigram` tokenizer, case-insensitive), so a substring search
-- of the services overview and of "find service" reads the matching rows instead of every row
-- (db/service-search.ts). External-content tables: they hold only the index, the text stays in the services'
-- tables; the triggers keep the index in step with every insert, update and delete.
CREATE VIRTUAL TABLE `http_services_search` USING fts5(`name`, `domain`, `path_location`, content='http_services', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `http_services_search_insert` AFTER INSERT ON `http_services` BEGIN
  INSERT INTO `http_services_search` (rowid, `name`, `domain`, `path_location`) VALUES (new.`id`, new.`name`, new.`domain`, new.`path_location`);
END;
--> statement-breakpoint
CREATE TRIGGER `http_services_search_delete` AFTER DELETE ON `http_services` BEGIN
  INSERT INTO `http_services_search` (`http_services_search`, rowid, `name`, `domain`, `path_location`) VALUES ('delete', old.`id`, old.`name`, old.`domain`, old.`path_location`);
END;
--> statement-breakpoint
CREATE TRIGGER `http_services_search_update` AFTER UPDATE OF `id`, `name`, `domain`, `path_location` ON `http_services` BEGIN
  INSERT INTO `http_services_search` (`http_services_search`, rowid, `name`, `domain`, `path_location`) VALUES ('delete', old.`id`, old.`name`, old.`domain`, old.`path_location`);
  INSERT INTO `http_services_search` (rowid, `name`, `domain`, `path_location`) VALUES (new.`id`, new.`name`, new.`domain`, new.`path_location`);
END;
--> statement-breakpoint
INSERT INTO `http_services_search` (`http_services_search`) VALUES ('rebuild');
--> statement-breakpoint
CREATE VIRTUAL TABLE `tcp_services_search` USING fts5(`name`, `domain`, `port`, content='tcp_services', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `tcp_services_search_insert` AFTER INSERT ON `tcp_services` BEGIN
  INSERT INTO `tcp_services_search` (rowid, `name`, `domain`, `port`) VALUES (new.`id`, new.`name`, new.`domain`, new.`port`);
END;
--> statement-breakpoint
CREATE TRIGGER `tcp_services_search_delete` AFTER DELETE ON `tcp_services` BEGIN
  INSERT INTO `tcp_services_search` (`tcp_services_search`, rowid, `name`, `domain`, `port`) VALUES ('delete', old.`id`, old.`name`, old.`domain`, old.`port`);
END;
--> statement-breakpoint
CREATE TRIGGER `tcp_services_search_update` AFTER UPDATE OF `id`, `name`, `domain`, `port` ON `tcp_services` BEGIN
  INSERT INTO `tcp_services_search` (`tcp_services_search`, rowid, `name`, `domain`, `port`) VALUES ('delete', old.`id`, old.`name`, old.`domain`, old.`port`);
  INSERT INTO `tcp_services_search` (rowid, `name`, `domain`, `port`) VALUES (new.`id`, new.`name`, new.`domain`, new.`port`);
END;
--> statement-breakpoint
INSERT INTO `tcp_services_search` (`tcp_services_search`) VALUES ('rebuild');
