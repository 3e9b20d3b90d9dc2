#!/bin/sh
mysql -e "FLUSH TABLES WITH READ LOCK"
