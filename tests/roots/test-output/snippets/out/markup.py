print("<script>alert(1)</script> & <b>bold</b>")
