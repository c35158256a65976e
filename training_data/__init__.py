"""What a checkpoint knows of its training data, in the files shipped beside it: how often each German word was
seen and where (evidence), when a sentence is unlike the training data (alarm, confidence), which kind of German
a text is (domain), whether it is German at all (language), how German written in one case is read (truecase),
and where the checkpoint came from (provenance). Training writes these files; the lens and the page read them."""
