-- Reserve $count game ids from the sequence the API uses, in ascending order.
SELECT nextval('game_id_seq') AS id FROM range($count) ORDER BY id
